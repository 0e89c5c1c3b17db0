// Included with -include: the compile reads it though no #include names it.
#define FORCED_VALUE 7
