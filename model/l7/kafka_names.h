/* Internal to model/l7: Kafka's names for its API keys and error codes (kafka_names.c). */
#ifndef GALATOP_MODEL_L7_KAFKA_NAMES_H
#define GALATOP_MODEL_L7_KAFKA_NAMES_H

#include <stdint.h>

/* "Produce" for API key 0; NULL for keys the table does not know. */
const char *kafka_api_name(int api);
/* The first version of api whose messages are flexible (compact strings, tagged fields); -1
 * when none is or the key is unknown. */
int kafka_api_flexible(int api);
/* "UNKNOWN_TOPIC_OR_PARTITION" for 3; "error" for codes the table does not know. */
const char *kafka_error_name(int code);

#endif
