/* plan_driver.c - runs `plan` through plan_main() alone, without the
 * harness, so the planner's tests do not depend on the rest of the binary. */
#include "plan.h"

int main(int argc, char **argv)
{
	return plan_main(argc, argv);
}
