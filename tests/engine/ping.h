/* For the engine tests' L7 workloads: the server side of a Redis PING pair over loopback. */
#ifndef GALATOP_TESTS_ENGINE_PING_H
#define GALATOP_TESTS_ENGINE_PING_H

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* Accepts one connection on lfd and answers +PONG to each read until it closes; exits. */
static void ping_serve(int lfd)
{
	char buf[256];
	int fd = accept(lfd, NULL, NULL);

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		if (write(fd, "+PONG\r\n", 7) != 7)
			break;
	_exit(0);
}

#endif
