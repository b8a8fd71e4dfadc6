#include "dp_fixture.h"
