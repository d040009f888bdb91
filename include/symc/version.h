/* The symc version, shared by the build API (symc.h) and the runtime, which
 * names it when it refuses an engine of another format. */
#ifndef SYMC_VERSION_H
#define SYMC_VERSION_H

#define SYMC_VERSION_MAJOR 0
#define SYMC_VERSION_MINOR 1
#define SYMC_VERSION_PATCH 0
#define SYMC_VERSION_STRING "0.1.0"

#endif
