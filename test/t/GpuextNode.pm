# GpuextNode: a PostgreSQL::Test::Cluster with gpuext installed, for gpuext's TAP tests.
#
# GPUEXT_TEST_DEVICE (auto, gpu or cpu; default auto) becomes the cluster's gpuext.device, so the
# same tests run on the CPU path and, on a GPU host (or the fake device build), with the GPU forced.
package GpuextNode;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time);

our @EXPORT = qw(gpuext_node device_mode device_ready sort_plan ms_since);

# The gpuext.device the tests run with.
sub device_mode
{
	return $ENV{GPUEXT_TEST_DEVICE} || 'auto';
}

# A started cluster with gpuext created in database postgres; preload => 1 loads the library in
# every process through shared_preload_libraries; conf => [lines] adds settings; checksums => 0
# initialises it without data checksums (initdb's default before PostgreSQL 18).
sub gpuext_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my @extra = (defined $opts{checksums} && !$opts{checksums} && $node->pg_version >= 18) ? ('--no-data-checksums') : ();

	$node->init(extra => \@extra);
	$node->append_conf('postgresql.conf', "gpuext.device = '" . device_mode() . "'\n");
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'gpuext'\n")
	  if $opts{preload};
	$node->append_conf('postgresql.conf', "$_\n") for @{ $opts{conf} || [] };
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION gpuext');
	return $node;
}

# Whether a backend of the node can use a device (a GPU, or the fake device).
sub device_ready
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT device_state FROM gpuext_info()') eq 'ready';
}

# The plan node ORDER BY gets once gpuext is loaded: Custom Scan (GpuSort), or PostgreSQL's Sort
# where GpuSort cannot use a GPU (gpuext.device = cpu, or a build without device code).
sub sort_plan
{
	my ($node) = @_;
	my $built = $node->safe_psql('postgres', 'SELECT gpu_kernels FROM gpuext_info(open_device => false)');
	return ($built eq 't' && device_mode() ne 'cpu') ? qr/Custom Scan \(GpuSort\)/ : qr/(?:^|->\s+)Sort$/m;
}

# Milliseconds since a Time::HiRes time.
sub ms_since
{
	my ($t0) = @_;
	return (time() - $t0) * 1000;
}

1;
