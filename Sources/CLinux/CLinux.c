// Wrappers for declarations that need _GNU_SOURCE; kept in C so the Swift side sees plain prototypes.
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <sys/un.h>
#include "CLinux.h"

int offertrack_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int offertrack_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int offertrack_peer_groups(int fd, gid_t *groups, int capacity) {
    socklen_t length = (socklen_t)(capacity * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0) {
        // ERANGE: `length` now holds the size needed.
        if (errno == ERANGE) return (int)(length / sizeof(gid_t));
        return -1;
    }
    return (int)(length / sizeof(gid_t));
}

int offertrack_socket_is_abstract(int fd) {
    struct sockaddr_un address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    return length > offsetof(struct sockaddr_un, sun_path) && address.sun_path[0] == '\0';
}

int offertrack_unread_output(int fd) {
    int bytes = 0;
    if (ioctl(fd, SIOCOUTQ, &bytes) != 0) return -1;
    return bytes;
}

int offertrack_contains_bytes(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length) != NULL;
}

int offertrack_is_zero(const void *bytes, size_t length) {
    const unsigned char *p = bytes;
    // The first byte zero and every byte equal to the next: glibc's vectorized memcmp does the pass.
    return length == 0 || (p[0] == 0 && memcmp(p, p + 1, length - 1) == 0);
}
