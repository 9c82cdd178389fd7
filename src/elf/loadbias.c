#include "elf/loadbias.h"
