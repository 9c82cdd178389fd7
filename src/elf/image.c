#include "elf/image.h"
