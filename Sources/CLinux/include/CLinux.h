#ifndef OFFERTRACK_CLINUX_H
#define OFFERTRACK_CLINUX_H
// Linux-only headers that Swift's Glibc module does not export: epoll, eventfd, signalfd.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/types.h>

/// accept4(2) with SOCK_NONBLOCK|SOCK_CLOEXEC; needs _GNU_SOURCE, which Swift's Glibc module lacks.
int offertrack_accept_nonblocking(int listener);

/// SO_PEERCRED: the peer's pid, uid and gid (struct ucred needs _GNU_SOURCE). Returns 0, or -1 with errno.
int offertrack_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// SO_PEERGROUPS: the peer's supplementary groups into `groups` (room for `capacity`). Returns how many there
/// are (which may exceed `capacity`: call again with room for that many), or -1 with errno.
int offertrack_peer_groups(int fd, gid_t *groups, int capacity);

/// Bytes written to a socket that its peer has not read yet (SIOCOUTQ), or -1 with errno.
int offertrack_unread_output(int fd);

/// Whether a bound AF_UNIX socket's address is abstract (starts with a NUL byte): 1, 0, or -1 with errno.
int offertrack_socket_is_abstract(int fd);

/// Whether `haystack` holds `needle` whole (glibc's memmem): 1 or 0.
int offertrack_contains_bytes(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);
/// Whether the `length` bytes at `bytes` are all zero (1) or not (0); 1 for none.
int offertrack_is_zero(const void *bytes, size_t length);
#endif
