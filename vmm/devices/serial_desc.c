// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UART as a device (device.h): set up on the port bus with its sink,
 * and described in the DSDT.  With a hardware-reduced FADT Linux assumes
 * no legacy devices: only a namespace device gives the UART its
 * interrupt, without which user space output on ttyS0 never drains.
 */
#include <string.h>

#include "aml.h"
#include "log.h"
#include "serial.h"

static int serial_setup(void *state, const struct dev_instance *d,
			const struct dev_env *env)
{
	static const struct serial_config none = { .sink = SERIAL_SINK_NONE };
	const struct serial_config *c =
		d->config ? d->config(env->machine) : &none;
	struct serial *s = state;
	int ret;

	if (c->sink == SERIAL_SINK_CALLBACK && c->host) {
		serial_open_callback(s, c->host, env->vm, d->irq);
		ret = 0;
	} else {
		ret = serial_open(s, c->sink, c->path, env->vm, d->irq);
	}
	if (ret) {
		pr_err("%s file:%s: %s; check the directory exists and is "
		       "writable",
		       c->option, c->path, strerror(-ret));
		serial_close(s);
		return ret;
	}
	ret = dev_registered(d, serial_register(s, env->io, (uint16_t)d->base));
	if (ret)
		serial_close(s);
	return ret;
}

static void serial_teardown(void *state)
{
	serial_close(state);
}

static void serial_dev_reset(void *state)
{
	serial_reset(state);
}

static int serial_aml(struct aml_buf *b, const struct dev_instance *d,
		      const struct dev_table_env *env)
{
	(void)env;
	AML_DEVICE(b, d->name) {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0501")));
		aml_emit(b, aml_name_decl("_UID", aml_int(d->uid)));
		aml_emit(b,
			 aml_name_decl("_CRS",
				       AML_RESOURCES(aml_io((uint16_t)d->base,
							    SERIAL_PORTS),
						     aml_irq_noflags(d->irq))));
	}
	return 0;
}

const struct dev_desc serial_desc = {
	.name = "serial",
	.bus = DEV_BUS_IO,
	.size = SERIAL_PORTS,
	.state_size = sizeof(struct serial),
	.setup = serial_setup,
	.teardown = serial_teardown,
	.reset = serial_dev_reset,
	.aml = serial_aml,
};
