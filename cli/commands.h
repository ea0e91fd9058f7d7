/* Entry points and help texts of the subcommands (one file each in cli/). */
#ifndef GALATOP_CLI_COMMANDS_H
#define GALATOP_CLI_COMMANDS_H

int cmd_collapse(int argc, char **argv);
extern const char cmd_collapse_help[];
int cmd_svg(int argc, char **argv);
extern const char cmd_svg_help[];
int cmd_diff(int argc, char **argv);
extern const char cmd_diff_help[];
int cmd_fold(int argc, char **argv);
extern const char cmd_fold_help[];

int cmd_record(int argc, char **argv);
extern const char cmd_record_help[];

int cmd_view(int argc, char **argv);
extern const char cmd_view_help[];

int cmd_live(int argc, char **argv);
extern const char cmd_live_help[];

/* In libgalatop-agent.so (cli/agent*.c and the sinks), which the binary loads for `agent`
 * through cmd_agent_loaded; its help is `galatop agent --help`. */
int cmd_agent(int argc, char **argv);
extern const char cmd_agent_help[];
int cmd_agent_loaded(int argc, char **argv);

#endif
