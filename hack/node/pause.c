/* The sandbox ("pause") process of every pod on the local node: PID 1 of the pod, it holds the pod's
 * namespaces, reaps orphaned children and exits 0 on SIGINT/SIGTERM. Built static by hack/node/build.sh and
 * packed as the image spreadwatch.local/pause (containerd's sandbox_image), so no image is pulled. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction on_stop, on_child;
  memset(&on_stop, 0, sizeof on_stop);
  memset(&on_child, 0, sizeof on_child);
  on_stop.sa_handler = stop;
  on_child.sa_handler = reap;
  on_child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGINT, &on_stop, NULL) != 0 || sigaction(SIGTERM, &on_stop, NULL) != 0 ||
      sigaction(SIGCHLD, &on_child, NULL) != 0) {
    return 1;
  }
  for (;;) {
    pause();
  }
}
