/* placeholder: being written */
#include "probe/bpf.h"
