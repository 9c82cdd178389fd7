#include "scan/snapshot.h"
