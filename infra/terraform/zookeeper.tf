# A three-node ZooKeeper ensemble, one node per AZ, with fixed private IPs so that the
# ensemble's server list (and the brokers' connect string) is known before boot.

locals {
  zookeeper_ips     = [for i in range(3) : cidrhost(aws_subnet.private[i].cidr_block, 10)]
  zookeeper_connect = join(",", [for ip in local.zookeeper_ips : "${ip}:2181"])
}

resource "aws_instance" "zookeeper" {
  count                       = 3
  ami                         = var.ami_id
  instance_type               = var.zookeeper_instance_type
  subnet_id                   = aws_subnet.private[count.index].id
  private_ip                  = local.zookeeper_ips[count.index]
  vpc_security_group_ids      = [aws_security_group.zookeeper.id]
  iam_instance_profile        = aws_iam_instance_profile.zookeeper.name
  associate_public_ip_address = false
  monitoring                  = true
  ebs_optimized               = true

  metadata_options {
    http_tokens   = "required"
    http_endpoint = "enabled"
  }

  root_block_device {
    volume_size = 30
    volume_type = "gp3"
    encrypted   = true
  }

  user_data = templatefile("${path.module}/templates/zookeeper_user_data.sh.tftpl", {
    my_id   = count.index + 1
    servers = local.zookeeper_ips
  })

  tags = { Name = "${var.cluster_name}-zookeeper-${count.index + 1}" }
}
