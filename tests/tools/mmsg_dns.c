/* mmsg_dns PORT N BATCH: sends N DNS queries for A records to 127.0.0.1:PORT over UDP, BATCH at
 * a time with one sendmmsg (as glibc's resolver sends its A and AAAA queries), and reads the
 * answers with recvmmsg (MSG_WAITFORONE: what has arrived, at least one). Query i asks for
 * "a<i>.l7.test" when i % 3 != 2, else for "n<i>.nosuch.test". Prints on standard output
 * "answers=A nxdomain=X" (answers whose id is one of the batch's queries, those with
 * rcode 3); exits 1 when an answer is missing after 2 s. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAXB 64

/* The query for name i into q (at least 64 bytes); returns its length. */
static size_t query(unsigned char *q, unsigned i)
{
	char label[16];
	size_t n = 12;

	memset(q, 0, 12);
	q[0] = (unsigned char)(i >> 8);
	q[1] = (unsigned char)i;
	q[2] = 0x01; /* RD */
	q[5] = 1;    /* one question */
	snprintf(label, sizeof(label), "%c%u", i % 3 == 2 ? 'n' : 'a', i);
	q[n++] = (unsigned char)strlen(label);
	memcpy(q + n, label, strlen(label));
	n += strlen(label);
	if (i % 3 == 2) {
		q[n++] = 6;
		memcpy(q + n, "nosuch", 6);
		n += 6;
	} else {
		q[n++] = 2;
		memcpy(q + n, "l7", 2);
		n += 2;
	}
	q[n++] = 4;
	memcpy(q + n, "test", 4);
	n += 4;
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1; /* A */
	q[n++] = 0, q[n++] = 1; /* IN */
	return n;
}

int main(int argc, char **argv)
{
	static unsigned char qbuf[MAXB][64], abuf[MAXB][512];
	struct mmsghdr qm[MAXB], am[MAXB];
	struct iovec qv[MAXB], av[MAXB];
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = 2};
	unsigned n, batch, answers = 0, nx = 0;
	int fd;

	if (argc != 4 || !(n = (unsigned)atoi(argv[2])) || !(batch = (unsigned)atoi(argv[3])) ||
	    batch > MAXB || n > 65535) {
		fprintf(stderr, "usage: mmsg_dns PORT N BATCH (BATCH <= %d, N < 65536)\n", MAXB);
		return 2;
	}
	sa.sin_port = htons((unsigned short)atoi(argv[1]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("mmsg_dns: socket");
		return 1;
	}
	for (unsigned first = 0; first < n; first += batch) {
		unsigned k = n - first < batch ? n - first : batch, got = 0;
		int r;

		memset(qm, 0, sizeof(qm));
		for (unsigned j = 0; j < k; j++) {
			qv[j].iov_base = qbuf[j];
			qv[j].iov_len = query(qbuf[j], first + j);
			qm[j].msg_hdr.msg_iov = &qv[j];
			qm[j].msg_hdr.msg_iovlen = 1;
		}
		for (unsigned sent = 0; sent < k; sent += (unsigned)r) {
			r = sendmmsg(fd, qm + sent, k - sent, 0);
			if (r <= 0) {
				perror("mmsg_dns: sendmmsg");
				return 1;
			}
		}
		while (got < k) {
			memset(am, 0, sizeof(am));
			for (unsigned j = 0; j < k - got; j++) {
				av[j].iov_base = abuf[j];
				av[j].iov_len = sizeof(abuf[j]);
				am[j].msg_hdr.msg_iov = &av[j];
				am[j].msg_hdr.msg_iovlen = 1;
			}
			r = recvmmsg(fd, am, k - got, MSG_WAITFORONE, NULL);
			if (r <= 0) {
				fprintf(stderr, "mmsg_dns: %u answers missing after query %u\n", k - got,
					first);
				return 1;
			}
			for (int j = 0; j < r; j++) {
				unsigned id = (unsigned)abuf[j][0] << 8 | abuf[j][1];

				if (am[j].msg_len < 12 || id < first || id >= first + k)
					continue;
				answers++;
				nx += (abuf[j][3] & 0xf) == 3;
			}
			got += (unsigned)r;
		}
	}
	printf("answers=%u nxdomain=%u\n", answers, nx);
	close(fd);
	return 0;
}
