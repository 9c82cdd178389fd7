/* placeholder: being written */
#include "probe/stats.h"
