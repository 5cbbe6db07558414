/* SPDX-License-Identifier: MIT */
/*
 * net_addr.h: the addresses of --http and --http-allow.
 *
 *   --http [ADDR:]PORT   ADDR an IPv4 address, [IPv6] or a host name
 *                        (resolved once, the first address); none:
 *                        127.0.0.1.  PORT 0: any free port.
 *   --http unix:PATH     a unix socket (AF_UNIX, PATH at most 107 bytes).
 *   --http-allow CIDR[,CIDR...]  e.g. 10.0.0.0/8,::1 (a plain address is
 *                        /32 or /128); an IPv4 peer also matches its
 *                        IPv4-mapped IPv6 form.
 */
#ifndef MEMTRACE_NET_ADDR_H
#define MEMTRACE_NET_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Parse S as --http's value into SS (*LEN its size).  0, or -1 with a
 * reason in ERR. */
int mt_listen_addr(const char *s, struct sockaddr_storage *ss,
		   socklen_t *len, char *err, size_t errlen);

#define MT_MAX_CIDRS 16

struct mt_cidr {
	int family;              /* AF_INET or AF_INET6 */
	uint8_t addr[16];        /* network byte order */
	unsigned bits;
};

struct mt_cidrs {
	struct mt_cidr c[MT_MAX_CIDRS];
	size_t n;
};

/* Parse S (a comma-separated list) into OUT.  0, or -1 with a reason. */
int mt_cidrs_parse(const char *s, struct mt_cidrs *out, char *err,
		   size_t errlen);

/* Is SA (a peer's address) in one of L's blocks? */
bool mt_cidrs_match(const struct mt_cidrs *l, const struct sockaddr *sa);

/* Is SA's address a loopback one (127/8, ::1)?  The wildcard (0.0.0.0,
 * ::)? */
bool mt_addr_is_loopback(const struct sockaddr *sa);
bool mt_addr_is_any(const struct sockaddr *sa);

/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6, "unix:PATH") of SA into BUF. */
void mt_addr_str(const struct sockaddr *sa, char *buf, size_t len);

#endif
