/* libsymc.so has no code of its own: it is the module libraries linked whole
 * (lib/CMakeLists.txt), with symc.map exporting the public API only. */
#include "symc/symc.h"
#include "symc/symrt.h"
