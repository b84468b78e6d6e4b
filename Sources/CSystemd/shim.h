#ifndef OFFERTRACK_CSYSTEMD_SHIM_H
#define OFFERTRACK_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
