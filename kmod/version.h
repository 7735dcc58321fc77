/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The release of probectl (module, library and CLI alike). The one place it
 * is written: CMake reads it for the library's soname and version header,
 * dkms.conf and debian/changelog are checked against it. Not the protocol:
 * that is PROBECTL_GENL_VERSION in uapi/probectl.h.
 */
#ifndef _PROBECTL_VERSION_H
#define _PROBECTL_VERSION_H

#define PROBECTL_RELEASE "0.1.0"

#endif
