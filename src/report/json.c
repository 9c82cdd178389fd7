#include "report/json.h"
