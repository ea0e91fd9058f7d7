#!/usr/bin/perl
# Checks a Chrome trace (galatop record --type threads -o x.json) the way Perfetto reads it.
#   trace_check.pl overlap FILE
#       "ok N" when no two "X" slices of one track (pid, tid) partly overlap (Perfetto drops
#       those), else the first overlap and exit 1.
#   trace_check.pl stats FILE NAME THREAD
#       "count mean_us min_us max_us" of the X slices named NAME on threads named THREAD.
#   trace_check.pl args FILE NAME KEY
#       the distinct values of args.KEY of slices named NAME, one per line.
use strict;
use warnings;
use JSON::PP;

my ($mode, $file, @rest) = @ARGV;
open(my $fh, '<', $file) or die "$file: $!\n";
my $doc = decode_json(do { local $/; <$fh> });
my @ev = @{ $doc->{traceEvents} or die "$file: no traceEvents\n" };
my %tname;
for my $e (@ev) {
	$tname{"$e->{pid}/$e->{tid}"} = $e->{args}{name}
	    if $e->{ph} eq 'M' && $e->{name} eq 'thread_name';
}
my @x = grep { $_->{ph} eq 'X' } @ev;
if ($mode eq 'overlap') {
	my %track;
	push @{ $track{"$_->{pid}/$_->{tid}"} }, $_ for @x;
	for my $t (keys %track) {
		my @s = sort { $a->{ts} <=> $b->{ts} } @{ $track{$t} };
		for my $i (1 .. $#s) {
			my ($p, $c) = ($s[$i - 1], $s[$i]);
			my $pend = $p->{ts} + $p->{dur};
			# Nesting is allowed; a partial overlap is what Perfetto drops.
			if ($c->{ts} < $pend - 1e-3 && $c->{ts} + $c->{dur} > $pend + 1e-3) {
				print "overlap on track $t: $p->{name} at $p->{ts}+$p->{dur}, $c->{name} at $c->{ts}\n";
				exit 1;
			}
		}
	}
	print "ok ", scalar(@x), "\n";
} elsif ($mode eq 'stats') {
	my ($name, $thread) = @rest;
	my @d = map { $_->{dur} }
	    grep { $_->{name} eq $name && ($tname{"$_->{pid}/$_->{tid}"} // '') eq $thread } @x;
	my ($sum, $min, $max) = (0, 1e300, 0);
	for (@d) { $sum += $_; $min = $_ if $_ < $min; $max = $_ if $_ > $max }
	printf "%d %.1f %.1f %.1f\n", scalar(@d), @d ? $sum / @d : 0, @d ? $min : 0, $max;
} elsif ($mode eq 'args') {
	my ($name, $key) = @rest;
	my %seen;
	$seen{ $_->{args}{$key} } = 1 for grep { $_->{name} eq $name && defined $_->{args}{$key} } @x;
	print "$_\n" for sort keys %seen;
} else {
	die "usage: trace_check.pl overlap|stats|args FILE ...\n";
}
