// The NATS C client (Debian's libnats-dev 3.4): imported only by the `NATS` wrapper module.
#include <nats/nats.h>
