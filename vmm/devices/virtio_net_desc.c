// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-net as a device (device.h): the tap opened, the MMIO transport
 * on the bus with its ioeventfds, irqfd and a thread per queue (the
 * virtio-net seccomp filter), and its DSDT device, LNRO0005 as every
 * virtio-MMIO device's.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "seccomp_policy.h"
#include "tap.h"
#include "virtio_blk.h"
#include "virtio_net.h"
#include "vm.h"

struct vnet_dev {
	struct vnet net;
	struct virtio_mmio mmio;
	int fd;
};

static int vnet_setup(void *state, const struct dev_instance *d,
		      const struct dev_env *env)
{
	struct vnet_dev *s = state;
	const struct vnet_config *c = d->config(env->machine);
	const struct gmem mem = { .r = env->vm->regions,
				  .nr = env->vm->nr_regions };
	struct hv_err err = { 0 };
	char id[16];
	uint8_t mac[6];
	bool offload;
	int ret;

	s->fd = tap_open(c->tap, &offload, &err);
	if (s->fd < 0) {
		pr_err("--net %s", hv_err_msg(&err));
		return s->fd;
	}
	if (c->mac_set)
		memcpy(mac, c->mac, sizeof(mac));
	else
		vnet_default_mac(env->vm_name ? env->vm_name : "hotvm", c->id,
				 d->uid, mac);
	snprintf(id, sizeof(id), "net%u", d->uid);
	ret = vnet_init(&s->net, s->fd, true, mac, offload && !c->no_offload,
			!c->no_mrg_rxbuf, c->id ? c->id : id);
	if (ret) {
		close(s->fd);
		return ret;
	}
	s->net.ops.filter = SECCOMP_THREAD_VIRTIO_NET;
	ret = virtio_mmio_init(&s->mmio, &s->net.ops, &s->net, &mem);
	if (!ret) {
		vnet_attach(&s->net, &s->mmio);
		ret = virtio_mmio_start(&s->mmio, env->vm, env->mmio, d->base,
					d->irq, d->name);
	}
	if (ret) {
		vnet_destroy(&s->net);
		close(s->fd);
		return ret;
	}
	return 0;
}

/* The vCPUs have stopped: the threads end after their frame in flight. */
static void vnet_teardown(void *state)
{
	struct vnet_dev *s = state;
	struct vnet_stats st;

	virtio_mmio_destroy(&s->mmio);
	vnet_get_stats(&s->net, &st);
	if (st.tx_bad || st.tx_oversize || st.tx_err || st.rx_bad ||
	    st.rx_oversize || st.rx_no_room || st.bad_chain)
		pr_err("%s: dropped: tx bad %llu, oversize %llu, refused %llu; "
		       "rx bad %llu, oversize %llu, no room %llu; bad chains "
		       "%llu",
		       s->net.id, (unsigned long long)st.tx_bad,
		       (unsigned long long)st.tx_oversize,
		       (unsigned long long)st.tx_err,
		       (unsigned long long)st.rx_bad,
		       (unsigned long long)st.rx_oversize,
		       (unsigned long long)st.rx_no_room,
		       (unsigned long long)st.bad_chain);
	vnet_destroy(&s->net);
	close(s->fd);
}

/* The VM's reset: the frame waiting is dropped, the queues forgotten. */
static void vnet_reset_dev(void *state)
{
	struct vnet_dev *s = state;

	virtio_mmio_reset(&s->mmio);
}

static int vnet_aml(struct aml_buf *b, const struct dev_instance *d,
		    const struct dev_table_env *env)
{
	return vblk_desc.aml(b, d,
			     env); /* to the guest, a virtio-MMIO device */
}

const struct dev_desc vnet_desc = {
	.name = "virtio-net",
	.bus = DEV_BUS_MMIO,
	.size = VIRTIO_MMIO_SIZE,
	.own_window = true,
	.state_size = sizeof(struct vnet_dev),
	.setup = vnet_setup,
	.teardown = vnet_teardown,
	.reset = vnet_reset_dev,
	.aml = vnet_aml,
};
