#include <stdio.h>
#include <fcgiapp.h>
