#include "target/procmap.h"
