#include "target/mem.h"
