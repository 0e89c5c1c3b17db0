/* A C file setuptools compiles with -Wall: its warning must read the same from the farm. */
#include <stdio.h>
int warns(int x) {
  int unused;
  return x + FORCED_VALUE;
}
