#include "scan/locate.h"
