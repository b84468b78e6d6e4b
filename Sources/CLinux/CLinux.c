// Wrappers for declarations that need _GNU_SOURCE; kept in C so the Swift side sees plain prototypes.
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
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
