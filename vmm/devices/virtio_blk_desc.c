// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-blk as a device (device.h): the image opened and locked, the
 * MMIO transport on the bus with its ioeventfd, irqfd and thread, and
 * its DSDT device: LNRO0005 (what Linux's virtio_mmio binds through ACPI)
 * with its window and interrupt in _CRS.
 */
#include <stdio.h>

#include "aml.h"
#include "log.h"
#include "virtio_blk.h"
#include "vm.h"

struct vblk_dev {
	struct vblk blk;
	struct virtio_mmio mmio;
};

static int vblk_setup(void *state, const struct dev_instance *d,
		      const struct dev_env *env)
{
	struct vblk_dev *s = state;
	const struct vblk_config *c = d->config(env->machine);
	const struct gmem mem = { .r = env->vm->regions,
				  .nr = env->vm->nr_regions };
	struct hv_err err = { 0 };
	int ret;

	s->blk.fd = -1;
	ret = vblk_open(&s->blk, c, d->uid, &err);
	if (ret) {
		pr_err("%s", hv_err_msg(&err));
		return ret;
	}
	ret = virtio_mmio_init(&s->mmio, &s->blk.ops, &s->blk, &mem);
	if (!ret)
		ret = virtio_mmio_start(&s->mmio, env->vm, env->mmio, d->base,
					d->irq, d->name);
	if (ret) {
		vblk_close(&s->blk);
		return ret;
	}
	return 0;
}

/* The vCPUs have stopped: the thread ends after its request in flight. */
static void vblk_teardown(void *state)
{
	struct vblk_dev *s = state;

	virtio_mmio_destroy(&s->mmio);
	vblk_close(&s->blk);
}

static void vblk_reset(void *state)
{
	struct vblk_dev *s = state;

	virtio_mmio_reset(&s->mmio);
}

static int vblk_aml(struct aml_buf *b, const struct dev_instance *d,
		    const struct dev_table_env *env)
{
	uint32_t irq = d->irq;

	(void)env;
	AML_DEVICE(b, d->name) {
		aml_emit(b, aml_name_decl("_HID", aml_string("LNRO0005")));
		aml_emit(b, aml_name_decl("_UID", aml_int(d->uid)));
		aml_emit(b,
			 aml_name_decl(
				 "_CRS",
				 AML_RESOURCES(
					 aml_memory32_fixed(AML_MEM_READ_WRITE,
							    (uint32_t)d->base,
							    VIRTIO_MMIO_SIZE),
					 aml_interrupt(AML_IRQ_CONSUMER |
							       AML_IRQ_EDGE,
						       &irq, 1))));
	}
	return 0;
}

const struct dev_desc vblk_desc = {
	.name = "virtio-blk",
	.bus = DEV_BUS_MMIO,
	.size = VIRTIO_MMIO_SIZE,
	.own_window = true,
	.state_size = sizeof(struct vblk_dev),
	.setup = vblk_setup,
	.teardown = vblk_teardown,
	.reset = vblk_reset,
	.aml = vblk_aml,
};
