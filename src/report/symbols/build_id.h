/* SPDX-License-Identifier: MIT */
/* build_id.h: the GNU build id of an ELF file, from an open descriptor. */
#ifndef MEMTRACE_BUILD_ID_H
#define MEMTRACE_BUILD_ID_H

#include <stddef.h>

/*
 * The GNU build id of the ELF file open on FD, in lower-case hex, into HEX
 * (LEN bytes; MT_BUILD_ID_HEX from profile.h holds any).  HEX is "" when
 * the file has none or is not ELF.  FD's offset is not used (libelf reads
 * with pread).  Returns 0, or -ENOSPC when HEX is too small (then "").
 */
int mt_build_id_hex(int fd, char *hex, size_t len);

#endif
