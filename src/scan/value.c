#include "scan/value.h"
