/* The "l7" section of .gtop snapshots: the L7 tables as export/l7_tables writes them to .json,
 * inside the snapshot's JSON. Hooks of export/snapshot*.c. */
#ifndef GALATOP_EXPORT_SNAPSHOT_L7_H
#define GALATOP_EXPORT_SNAPSHOT_L7_H

#include "jsonio.h"
#include "snapshot.h"

/* Writes ,"l7":{...} when s->l7 is set. */
void snapshot_l7_write(struct json_out *o, const struct snapshot *s);
/* Reads the value of the "l7" key into a new s->l7. 0 or -EINVAL/-ENOMEM (error in in->e). */
int snapshot_l7_read(struct json_in *in, struct snapshot *s);
/* Frees a table snapshot_l7_read made. */
void snapshot_l7_free(struct snapshot *s);

#endif
