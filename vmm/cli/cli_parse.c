// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm run`'s parser: each argument is looked up in the option table
 * (cli_options.c) and its value handed to that row's function.  Hand-rolled
 * rather than getopt_long so that it is reentrant and unit tests can call it
 * repeatedly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"

/*
 * The row whose name or alias argument a spells, before any "=value";
 * *eq is set to the '=' or NULL.
 */
static const struct cli_opt *find_opt(const char *a, const char **eq)
{
	size_t n, len;
	const struct cli_opt *t = cli_run_options(&n);

	*eq = strchr(a, '=');
	len = *eq ? (size_t)(*eq - a) : strlen(a);
	for (size_t i = 0; i < n; i++) {
		if (strlen(t[i].name) == len && !strncmp(a, t[i].name, len))
			return &t[i];
		if (t[i].alias && strlen(t[i].alias) == len &&
		    !strncmp(a, t[i].alias, len))
			return &t[i];
	}
	return NULL;
}

int cli_parse_run(int argc, char **argv, struct cli_run_opts *o)
{
	*o = (struct cli_run_opts){ 0 };
	board_config_init(&o->board);
	for (int i = 1; i < argc; i++) {
		const char *eq, *v = NULL;
		const struct cli_opt *opt = find_opt(argv[i], &eq);
		int ret;

		/* An option that takes no value takes no "=value" either. */
		if (!opt || (eq && !opt->arg)) {
			pr_err("unknown argument '%s'; see 'hotvm run --help'",
			       argv[i]);
			return -EINVAL;
		}
		if (eq) {
			v = eq + 1;
		} else if (opt->arg) {
			if (i + 1 >= argc) {
				pr_err("option %s needs a value; see 'hotvm "
				       "run --help'",
				       opt->name);
				return -EINVAL;
			}
			v = argv[++i];
		}
		ret = opt->parse(o, v);
		if (ret == CLI_OPT_STOP)
			return 0;
		if (ret)
			return -EINVAL;
	}
	return 0;
}

int cli_parse_disk(char *text, struct vblk_config *out, char *why,
		   size_t whylen)
{
	bool seen_ro = false;
	char *save = NULL;

	*out = (struct vblk_config){ 0 };
	for (char *kv = strtok_r(text, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');

		if (!v) {
			snprintf(why, whylen, "'%s' is not key=value", kv);
			return -EINVAL;
		}
		*v++ = 0;
		if (!strcmp(kv, "path") && !out->path) {
			if (!*v) {
				snprintf(why, whylen, "empty path");
				return -EINVAL;
			}
			out->path = v;
		} else if (!strcmp(kv, "readonly") && !seen_ro) {
			if (strcmp(v, "on") && strcmp(v, "off")) {
				snprintf(why, whylen,
					 "readonly=%s: give on or off", v);
				return -EINVAL;
			}
			out->readonly = !strcmp(v, "on");
			seen_ro = true;
		} else if (!strcmp(kv, "id") && !out->id) {
			size_t n = strlen(v);

			if (!n || n > 20 ||
			    strspn(v, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789._-") != n) {
				snprintf(why, whylen,
					 "id=%s: give 1 to 20 of A-Z a-z 0-9 "
					 ". _ -",
					 v);
				return -EINVAL;
			}
			out->id = v;
		} else {
			snprintf(why, whylen, "%s: %s", kv,
				 strcmp(kv, "path") && strcmp(kv, "readonly") &&
						 strcmp(kv, "id")
					 ? "unknown key"
					 : "given twice");
			return -EINVAL;
		}
	}
	if (!out->path) {
		snprintf(why, whylen, "no path");
		return -EINVAL;
	}
	return 0;
}

/* "on" or "off" into *out: 0, or -EINVAL with the reason. */
static int on_off(const char *key, const char *v, bool *out, char *why,
		  size_t whylen)
{
	if (strcmp(v, "on") && strcmp(v, "off")) {
		snprintf(why, whylen, "%s=%s: give on or off", key, v);
		return -EINVAL;
	}
	*out = !strcmp(v, "on");
	return 0;
}

int cli_parse_net(char *text, struct vnet_config *out, char *why, size_t whylen)
{
	static const char *const keys[] = { "tap", "mac", "id", "offload",
					    "mrg_rxbuf" };
	unsigned int seen = 0;
	char *save = NULL;

	*out = (struct vnet_config){ 0 };
	for (char *kv = strtok_r(text, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		unsigned int k = 0;
		bool on;

		if (!v) {
			snprintf(why, whylen, "'%s' is not key=value", kv);
			return -EINVAL;
		}
		*v++ = 0;
		while (k < 5 && strcmp(kv, keys[k]))
			k++;
		if (k == 5 || (seen & (1u << k))) {
			snprintf(why, whylen, "%s: %s", kv,
				 k == 5 ? "unknown key" : "given twice");
			return -EINVAL;
		}
		seen |= 1u << k;
		switch (k) {
		case 0:
			if (!*v) {
				snprintf(why, whylen, "empty tap name");
				return -EINVAL;
			}
			out->tap = v;
			break;
		case 1:
			if (vnet_parse_mac(v, out->mac)) {
				snprintf(why, whylen,
					 "mac=%s: not a unicast MAC (six hex "
					 "pairs with colons, e.g. "
					 "02:00:00:00:00:01)",
					 v);
				return -EINVAL;
			}
			out->mac_set = true;
			break;
		case 2: {
			size_t n = strlen(v);

			if (!n || n > VNET_ID_MAX ||
			    strspn(v, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789._-") != n) {
				snprintf(why, whylen,
					 "id=%s: give 1 to %d of A-Z a-z 0-9 "
					 ". _ -",
					 v, VNET_ID_MAX);
				return -EINVAL;
			}
			out->id = v;
			break;
		}
		default:
			if (on_off(kv, v, &on, why, whylen))
				return -EINVAL;
			if (k == 3)
				out->no_offload = !on;
			else
				out->no_mrg_rxbuf = !on;
		}
	}
	if (!out->tap) {
		snprintf(why, whylen, "no tap");
		return -EINVAL;
	}
	return 0;
}
