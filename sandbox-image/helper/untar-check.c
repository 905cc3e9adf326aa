/*
 * untar-check ROOT: the sandbox's extractor (untar.h) on its own, for tests
 * (tests/untar-refusals.test.ts feeds it crafted archives). Reads the tar on
 * stdin, extracts below ROOT; exit 0, or PUT_REFUSED with the reason on stderr.
 * Never part of an image.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "spawn-proto.h"
#include "untar.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: untar-check ROOT < archive.tar\n");
    return 2;
  }
  int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0) {
    perror(argv[1]);
    return 2;
  }
  char why[512];
  if (untar(0, root, why, sizeof why) != 0) {
    fprintf(stderr, "refused: %s\n", why);
    return PUT_REFUSED;
  }
  return 0;
}
