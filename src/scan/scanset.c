#include "scan/scanset.h"
