# Brokers: an Auto Scaling group over the three private subnets. Each instance installs the
# package with pip (user_data), formats its data volume and runs the broker under systemd,
# with the cold tier at s3://<bucket>/<cluster_name>/ through the instance profile.

resource "aws_launch_template" "broker" {
  name_prefix   = "${var.cluster_name}-broker-"
  image_id      = var.ami_id
  instance_type = var.broker_instance_type

  iam_instance_profile {
    arn = aws_iam_instance_profile.broker.arn
  }

  vpc_security_group_ids = [aws_security_group.broker.id]
  ebs_optimized          = true

  metadata_options {
    http_tokens                 = "required"
    http_endpoint               = "enabled"
    http_put_response_hop_limit = 1
  }

  monitoring {
    enabled = true
  }

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 30
      volume_type = "gp3"
      encrypted   = true
    }
  }

  block_device_mappings {
    device_name = "/dev/sdf"
    ebs {
      volume_size           = var.broker_volume_size_gb
      volume_type           = "gp3"
      throughput            = 250
      encrypted             = true
      delete_on_termination = true
    }
  }

  user_data = base64encode(templatefile("${path.module}/templates/broker_user_data.sh.tftpl", {
    package_spec      = var.package_spec
    bucket            = aws_s3_bucket.cold.bucket
    cold_prefix       = local.cold_prefix
    region            = var.region
    kafka_port        = var.kafka_port
    zookeeper_connect = local.zookeeper_connect
  }))

  tag_specifications {
    resource_type = "instance"
    tags          = { Name = "${var.cluster_name}-broker", Role = "broker" }
  }
}

resource "aws_autoscaling_group" "broker" {
  name                = "${var.cluster_name}-broker"
  min_size            = var.broker_count
  max_size            = var.broker_count
  desired_capacity    = var.broker_count
  vpc_zone_identifier = aws_subnet.private[*].id
  health_check_type   = "EC2"

  launch_template {
    id      = aws_launch_template.broker.id
    version = "$Latest"
  }

  tag {
    key                 = "Name"
    value               = "${var.cluster_name}-broker"
    propagate_at_launch = true
  }

  depends_on = [aws_instance.zookeeper]
}
