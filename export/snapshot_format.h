/* What the snapshot writer and reader agree on beyond snapshot.h: the node columns of a
 * profile, in the order they are written (see docs/snapshot.md). */
#ifndef GALATOP_EXPORT_SNAPSHOT_FORMAT_H
#define GALATOP_EXPORT_SNAPSHOT_FORMAT_H

enum column { COL_PARENT, COL_FRAME, COL_SELF, COL_SELF2, COL_MAX };
static const char *const column_names[COL_MAX] = { "parent", "frame", "self", "self2" };

#endif
