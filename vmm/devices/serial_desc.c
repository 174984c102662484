// SPDX-License-Identifier: GPL-2.0-only
/*
 * The UART as the DSDT describes it.  With a hardware-reduced FADT Linux
 * assumes no legacy devices: only a namespace device gives the UART its
 * interrupt, without which user space output on ttyS0 never drains.
 */
#include "aml.h"
#include "serial.h"

void serial_build_aml(struct aml_buf *b, const char *name, uint16_t port,
		      unsigned int irq, unsigned int uid)
{
	AML_DEVICE(b, name) {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0501")));
		aml_emit(b, aml_name_decl("_UID", aml_int(uid)));
		aml_emit(b,
			 aml_name_decl("_CRS",
				       AML_RESOURCES(aml_io(port, SERIAL_PORTS),
						     aml_irq_noflags(irq))));
	}
}
