#include <stdio.h>
#include <magic.h>
