// Falls through without the comment: -Wimplicit-fallthrough -Werror refuses it.
int Fallthrough(int n) {
  switch (n) {
    case 1:
      n += 1;
    case 2:
      return n;
  }
  return 0;
}
