#include "elf/addrspec.h"
