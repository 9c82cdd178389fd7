#include "target/target.h"
