/* placeholder: being written */
#include "probe/resolve.h"
