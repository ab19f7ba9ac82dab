#include <stdio.h>
#include <png.h>
