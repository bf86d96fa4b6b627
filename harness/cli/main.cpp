// The gbcheck executable: everything lives in the libraries; see harness/cli/cli.cpp.
#include "harness/cli/cli.h"

int main(int argc, char** argv) { return gbc::cli_main(argc, argv); }
