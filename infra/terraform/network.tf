# One VPC, three private subnets (one per AZ) behind a NAT gateway for package installs,
# and security groups that open only what each tier needs:
#   clients -> brokers:kafka_port; brokers -> brokers:kafka_port (replication);
#   brokers -> zookeeper:2181; zookeeper <-> zookeeper:2888,3888 (quorum, election).
# S3 traffic goes through a gateway endpoint, not the NAT.

resource "aws_vpc" "main" {
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = var.cluster_name }
}

resource "aws_subnet" "private" {
  count             = 3
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 8, count.index)
  availability_zone = var.availability_zones[count.index]
  tags              = { Name = "${var.cluster_name}-private-${count.index}" }
}

resource "aws_subnet" "public" {
  vpc_id                  = aws_vpc.main.id
  cidr_block              = cidrsubnet(var.vpc_cidr, 8, 100)
  availability_zone       = var.availability_zones[0]
  map_public_ip_on_launch = false
  tags                    = { Name = "${var.cluster_name}-public" }
}

resource "aws_internet_gateway" "main" {
  vpc_id = aws_vpc.main.id
}

resource "aws_eip" "nat" {
  domain = "vpc"
}

resource "aws_nat_gateway" "main" {
  allocation_id = aws_eip.nat.id
  subnet_id     = aws_subnet.public.id
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.main.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.main.id
  }
}

resource "aws_route_table_association" "public" {
  subnet_id      = aws_subnet.public.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.main.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.main.id
  }
}

resource "aws_route_table_association" "private" {
  count          = 3
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id]
}

resource "aws_security_group" "broker" {
  name        = "${var.cluster_name}-broker"
  description = "tiered-mq brokers"
  vpc_id      = aws_vpc.main.id
}

resource "aws_security_group" "zookeeper" {
  name        = "${var.cluster_name}-zookeeper"
  description = "ZooKeeper ensemble"
  vpc_id      = aws_vpc.main.id
}

resource "aws_vpc_security_group_ingress_rule" "kafka_from_clients" {
  for_each          = toset(var.client_cidrs)
  security_group_id = aws_security_group.broker.id
  description       = "Kafka clients"
  ip_protocol       = "tcp"
  from_port         = var.kafka_port
  to_port           = var.kafka_port
  cidr_ipv4         = each.value
}

resource "aws_vpc_security_group_ingress_rule" "kafka_between_brokers" {
  security_group_id            = aws_security_group.broker.id
  description                  = "Replication between brokers"
  ip_protocol                  = "tcp"
  from_port                    = var.kafka_port
  to_port                      = var.kafka_port
  referenced_security_group_id = aws_security_group.broker.id
}

resource "aws_vpc_security_group_ingress_rule" "zk_from_brokers" {
  security_group_id            = aws_security_group.zookeeper.id
  description                  = "ZooKeeper clients (brokers)"
  ip_protocol                  = "tcp"
  from_port                    = 2181
  to_port                      = 2181
  referenced_security_group_id = aws_security_group.broker.id
}

resource "aws_vpc_security_group_ingress_rule" "zk_quorum" {
  for_each                     = toset(["2888", "3888"])
  security_group_id            = aws_security_group.zookeeper.id
  description                  = "ZooKeeper quorum and leader election"
  ip_protocol                  = "tcp"
  from_port                    = tonumber(each.value)
  to_port                      = tonumber(each.value)
  referenced_security_group_id = aws_security_group.zookeeper.id
}

resource "aws_vpc_security_group_egress_rule" "broker_out" {
  security_group_id = aws_security_group.broker.id
  description       = "Package installs (NAT), S3 (gateway endpoint), ZooKeeper, other brokers"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_egress_rule" "zookeeper_out" {
  security_group_id = aws_security_group.zookeeper.id
  description       = "Package installs (NAT) and quorum traffic"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}
