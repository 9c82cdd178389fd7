#include "target/maps.h"
