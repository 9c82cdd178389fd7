#include "scan/pointers.h"
