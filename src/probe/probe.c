/* placeholder */
#include "probe/bpf.h"
