#include "util/error.h"
int main(void) { return 0; }
