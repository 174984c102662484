/* hotvm run --cpus boot=1,max=2 --dump-acpi, iasl 20200925 -d dsdt.dat */
/*
 *
 * Disassembling to symbolic ASL+ operators
 *
 *
 * Original Table Header:
 *     Signature        "DSDT"
 *     Length           0x0000040C (1036)
 *     Revision         0x02
 *     Checksum         0xBF
 *     OEM ID           "HOTVM "
 *     OEM Table ID     "HOTVMTBL"
 *     OEM Revision     0x00000001 (1)
 *     Compiler ID      "HTVM"
 *     Compiler Version 0x00000001 (1)
 */
DefinitionBlock ("", "DSDT", 2, "HOTVM ", "HOTVMTBL", 0x00000001)
{
    Scope (\_SB)
    {
        Device (CPUS)
        {
            Name (_HID, "ACPI0010" /* Processor Container Device */)  // _HID: Hardware ID
            Name (_CID, EisaId ("PNP0A05") /* Generic Container Device */)  // _CID: Compatible ID
            OperationRegion (PRST, SystemMemory, 0xFEB00100, 0x0C)
            Field (PRST, ByteAcc, NoLock, WriteAsZeros)
            {
                Offset (0x04),
                CPEN,   1,
                CINS,   1,
                CRMV,   1,
                CEJT,   1,
                Offset (0x05),
                CCMD,   8
            }

            Field (PRST, DWordAcc, NoLock, Preserve)
            {
                CSEL,   32,
                Offset (0x08),
                CDAT,   32
            }

            Mutex (CPLK, 0x00)
            Method (CSTA, 1, Serialized)
            {
                Acquire (CPLK, 0xFFFF)
                CSEL = Arg0
                Local0 = Zero
                If ((CPEN == One))
                {
                    Local0 = 0x0F
                }

                Release (CPLK)
                Return (Local0)
            }

            Method (CEJ0, 1, Serialized)
            {
                Acquire (CPLK, 0xFFFF)
                CSEL = Arg0
                CEJT = One
                Release (CPLK)
            }

            Method (COST, 4, Serialized)
            {
                Acquire (CPLK, 0xFFFF)
                CSEL = Arg0
                CCMD = One
                CDAT = Arg1
                CCMD = 0x02
                CDAT = Arg2
                Release (CPLK)
            }

            Method (CTFY, 2, NotSerialized)
            {
                Local0 = (Arg0 >> 0x04)
                If ((Local0 == Zero))
                {
                    If ((Arg0 == Zero))
                    {
                        Notify (C000, Arg1)
                    }

                    If ((Arg0 == One))
                    {
                        Notify (C001, Arg1)
                    }
                }
            }

            Method (CSCN, 0, Serialized)
            {
                Acquire (CPLK, 0xFFFF)
                CSEL = Zero
                Local0 = One
                Local1 = Zero
                While ((Local0 && (Local1 < 0x02)))
                {
                    Local0 = Zero
                    CCMD = Zero
                    Local2 = CDAT /* \_SB_.CPUS.CDAT */
                    If ((CINS == One))
                    {
                        CTFY (Local2, One)
                        CINS = One
                        Local0 = One
                    }

                    If ((CRMV == One))
                    {
                        CTFY (Local2, 0x03)
                        CRMV = One
                        Local0 = One
                    }

                    Local1++
                }

                Release (CPLK)
            }

            Method (CMTL, 2, Serialized)
            {
                Name (LAPI, Buffer (0x08)
                {
                     0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00   // ........
                })
                CreateByteField (LAPI, 0x02, LUID)
                CreateByteField (LAPI, 0x03, LAID)
                CreateDWordField (LAPI, 0x04, LFLG)
                LUID = Arg0
                LAID = Arg1
                LFLG = (CSTA (Arg0) & One)
                Return (LAPI) /* \_SB_.CPUS.CMTL.LAPI */
            }

            Method (CMTX, 2, Serialized)
            {
                Name (X2AP, Buffer (0x10)
                {
                    /* 0000 */  0x09, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // ........
                    /* 0008 */  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00   // ........
                })
                CreateDWordField (X2AP, 0x04, XAID)
                CreateDWordField (X2AP, 0x08, XFLG)
                CreateDWordField (X2AP, 0x0C, XUID)
                XUID = Arg0
                XAID = Arg1
                XFLG = (CSTA (Arg0) & One)
                Return (X2AP) /* \_SB_.CPUS.CMTX.X2AP */
            }

            Device (C000)
            {
                Name (_HID, "ACPI0007" /* Processor Device */)  // _HID: Hardware ID
                Name (_UID, Zero)  // _UID: Unique ID
                Method (_STA, 0, NotSerialized)  // _STA: Status
                {
                    Return (CSTA (Zero))
                }

                Method (_MAT, 0, NotSerialized)  // _MAT: Multiple APIC Table Entry
                {
                    Return (CMTL (Zero, Zero))
                }

                Method (_OST, 3, NotSerialized)  // _OST: OSPM Status Indication
                {
                    COST (Zero, Arg0, Arg1, Arg2)
                }
            }

            Device (C001)
            {
                Name (_HID, "ACPI0007" /* Processor Device */)  // _HID: Hardware ID
                Name (_UID, One)  // _UID: Unique ID
                Method (_STA, 0, NotSerialized)  // _STA: Status
                {
                    Return (CSTA (One))
                }

                Method (_MAT, 0, NotSerialized)  // _MAT: Multiple APIC Table Entry
                {
                    Return (CMTL (One, One))
                }

                Method (_EJ0, 1, NotSerialized)  // _EJx: Eject Device, x=0-9
                {
                    CEJ0 (One)
                }

                Method (_OST, 3, NotSerialized)  // _OST: OSPM Status Indication
                {
                    COST (One, Arg0, Arg1, Arg2)
                }
            }
        }

        Device (GED)
        {
            Name (_HID, "ACPI0013" /* Generic Event Device */)  // _HID: Hardware ID
            Name (_UID, Zero)  // _UID: Unique ID
            Name (_CRS, ResourceTemplate ()  // _CRS: Current Resource Settings
            {
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive, ,, )
                {
                    0x00000005,
                }
            })
            OperationRegion (EREG, SystemMemory, 0xFEB00000, 0x04)
            Field (EREG, DWordAcc, NoLock, WriteAsZeros)
            {
                ESEL,   32
            }

            Method (_EVT, 1, Serialized)  // _EVT: Event
            {
                Local0 = ESEL /* \_SB_.GED_.ESEL */
                If ((Local0 & 0x08))
                {
                    \_SB.CPUS.CSCN ()
                }

                If ((Local0 & 0x02))
                {
                    Notify (\_SB.PWRB, 0x80) // Status Change
                }
            }
        }

        Device (COM1)
        {
            Name (_HID, EisaId ("PNP0501") /* 16550A-compatible COM Serial Port */)  // _HID: Hardware ID
            Name (_UID, Zero)  // _UID: Unique ID
            Name (_CRS, ResourceTemplate ()  // _CRS: Current Resource Settings
            {
                IO (Decode16,
                    0x03F8,             // Range Minimum
                    0x03F8,             // Range Maximum
                    0x01,               // Alignment
                    0x08,               // Length
                    )
                IRQNoFlags ()
                    {4}
            })
        }

        Device (MRES)
        {
            Name (_HID, EisaId ("PNP0C02") /* PNP Motherboard Resources */)  // _HID: Hardware ID
            Name (_UID, Zero)  // _UID: Unique ID
            Name (_CRS, ResourceTemplate ()  // _CRS: Current Resource Settings
            {
                Memory32Fixed (ReadWrite,
                    0xFEB00000,         // Address Base
                    0x00000004,         // Address Length
                    )
                Memory32Fixed (ReadWrite,
                    0xFEB00100,         // Address Base
                    0x0000000C,         // Address Length
                    )
            })
        }

        Name (\_S5, Package (0x04)  // _S5_: S5 System State
        {
            0x05,
            0x05,
            Zero,
            Zero
        })
        Device (PWRB)
        {
            Name (_HID, EisaId ("PNP0C0C") /* Power Button Device */)  // _HID: Hardware ID
            Name (_UID, Zero)  // _UID: Unique ID
        }
    }
}

